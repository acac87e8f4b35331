package io.sessionrecall.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.springframework.ai.support.ToolCallbacks;
import org.springframework.ai.tool.ToolCallback;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A background agent saves what it learnt; the live agent recalls it; never another user's. */
class KeptMemoryToolsTest {

	static Map<String, ToolCallback> tools(String user) {
		return Arrays.stream(ToolCallbacks.from(KeptMemoryTools.create(Sidecar.operator(), user)))
			.collect(Collectors.toMap(t -> t.getToolDefinition().name(), Function.identity()));
	}

	@Test
	void savedMemoriesAreRecalledForTheirUserAlone() {
		SessionRecallClient client = Sidecar.operator();
		String alice = Sidecar.user("alice");
		String bob = Sidecar.user("bob");
		Instant start = Instant.parse("2026-06-01T09:00:00Z");
		client.store(Sidecar.events(alice, start, "s1", "user_message", "We decided to use MySQL for billing"));
		client.store(Sidecar.events(bob, start, "s1", "user_message", "We decided to use Oracle for billing"));
		Map<String, ToolCallback> forAlice = tools(alice);
		assertEquals(java.util.Set.of("recall_memories", "save_memory"), forAlice.keySet());

		String saved = forAlice.get("save_memory")
			.call("{\"statement\":\"Billing uses MySQL.\",\"kind\":\"decision\",\"sources\":[\"" + alice + "-e0\"]}");
		JsonNode answer = JsonMapper.shared().readTree(saved);
		assertTrue(answer.path("created").asBoolean(), saved);
		// bob's event is no source of alice's: refused, worded for the model.
		String refused = forAlice.get("save_memory")
			.call("{\"statement\":\"Billing uses Oracle.\",\"kind\":\"decision\",\"sources\":[\"" + bob + "-e0\"]}");
		assertTrue(refused.startsWith("Error: "), refused);

		String recalled = forAlice.get("recall_memories")
			.call("{\"innerThought\":\"t\",\"query\":\"which database for billing\"}");
		assertTrue(recalled.contains("Billing uses MySQL."), recalled);
		assertFalse(recalled.contains("Oracle"), recalled);
		String bobs = tools(bob).get("recall_memories").call("{\"innerThought\":\"t\",\"query\":\"billing\"}");
		assertFalse(bobs.contains("MySQL"), bobs);
	}

}
