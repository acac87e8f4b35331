package io.sessionrecall.springai;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.support.ToolCallbacks;
import org.springframework.ai.tool.ToolCallback;

/** A client bound to alice never returns bob's events, whatever the model sends. */
class IsolationTest {

	@BeforeAll
	static void seed() {
		Instant start = Instant.parse("2026-05-01T08:00:00Z");
		SessionRecallClient operator = Sidecar.operator();
		operator.store(Sidecar.events("alice", start, "a1", "user_message", "alice likes the lighthouse tour"));
		operator.store(Sidecar.events("bob", start, "b1", "user_message", "bob keeps the lighthouse key"));
	}

	@Test
	void noArgumentTheModelSendsReachesBob() {
		ToolCallback tool = ToolCallbacks.from(CrossSessionRecallTools.builder(Sidecar.operator(), "alice").build())[0];
		for (String arguments : List.of("{\"innerThought\":\"t\",\"query\":\"lighthouse\",\"userId\":\"bob\"}",
				"{\"innerThought\":\"t\",\"query\":\"lighthouse\",\"user_id\":\"bob\",\"user\":\"bob\"}",
				"{\"innerThought\":\"t\",\"query\":\"bob, key, lighthouse\",\"matchMode\":\"any\"}",
				"{\"innerThought\":\"t\",\"query\":\"*\"}")) {
			String output = tool.call(arguments);
			assertFalse(output.contains("bob keeps"), arguments + " -> " + output);
		}
		assertTrue(tool.call("{\"innerThought\":\"t\",\"query\":\"lighthouse\"}").contains("alice likes"));
	}

	@Test
	void alicesTokenIsRefusedForBobEvenByAHandBuiltRequest() {
		SessionRecallClient asAlice = Sidecar.alice();
		assertTrue(asAlice.crossSessionSearch("alice", "{\"innerThought\":\"t\",\"query\":\"lighthouse\"}", null)
			.contains("alice likes"));
		assertThrows(SessionRecallException.Forbidden.class,
				() -> asAlice.crossSessionSearch("bob", "{\"innerThought\":\"t\",\"query\":\"lighthouse\"}", null));
		assertThrows(SessionRecallException.Forbidden.class, () -> asAlice.events("bob", "b1"));
		assertThrows(SessionRecallException.Forbidden.class, () -> asAlice.sessionIds("bob"));
		assertThrows(SessionRecallException.Forbidden.class, () -> asAlice.deleteSession("bob", "b1"));
		assertTrue(Sidecar.operator().events("bob", "b1").size() == 1, "bob's event is still there");
	}

	@Test
	void aWrongTokenSaysSo() {
		SessionRecallClient forged = SessionRecallClient.builder().baseUrl(Sidecar.url()).token("not-a-token").build();
		SessionRecallException err = assertThrows(SessionRecallException.Unauthorized.class,
				() -> forged.sessionIds("alice"));
		assertFalse(err.getMessage().isBlank());
	}

}
