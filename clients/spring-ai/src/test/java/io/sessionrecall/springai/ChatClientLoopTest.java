package io.sessionrecall.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.ToolCallAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;

/**
 * The full loop: Spring AI finds the tool, calls it with the model's JSON, and hands the
 * answer back. A provider's ChatModel runs the loop itself; a scripted one runs it
 * through Spring AI's ToolCallAdvisor.
 */
class ChatClientLoopTest {

	static String alice;

	static SessionRecallClient client;

	@BeforeAll
	static void seed() {
		client = Sidecar.operator();
		alice = Sidecar.user("alice");
		String bob = Sidecar.user("bob");
		Instant start = Instant.parse("2026-04-01T09:00:00Z");
		client.store(Sidecar.events(alice, start, //
				"trip", "user_message", "My passport number ends in 4417", //
				"work", "user_message", "The passport office opens at nine"));
		client.store(Sidecar.events(bob, start, "trip", "user_message", "Bob's passport is kept in the safe"));
	}

	@Test
	void crossSessionSearchRunsInsideTheChatClientLoop() {
		ScriptedChatModel model = new ScriptedChatModel("cross_session_search",
				"{\"innerThought\":\"look it up\",\"query\":\"passport\"}");
		// --8<-- [start:loop]
		ChatClient chat = ChatClient.builder(model)
			.defaultAdvisors(ToolCallAdvisor.builder().build())
			.defaultTools(CrossSessionRecallTools.builder(client, alice).pageSize(20).build())
			.build();
		String answer = chat.prompt().user("What do you know about my passport?").call().content();
		// --8<-- [end:loop]
		assertTrue(answer.startsWith("From memory: ["), answer);
		assertTrue(answer.contains("My passport number ends in 4417"), answer);
		assertTrue(answer.contains("The passport office opens at nine"), answer);
		assertFalse(answer.contains("safe"), answer);
		assertEquals(2, model.prompts.size(), "one call with the tool, one with its answer");
	}

	@Test
	void conversationSearchTakesItsSessionFromTheToolContextNotTheModel() {
		// The model tries to widen the search to another session and another user.
		ScriptedChatModel model = new ScriptedChatModel("conversation_search",
				"{\"innerThought\":\"t\",\"query\":\"passport\",\"sessionId\":\"work\",\"userId\":\"bob\"}");
		// --8<-- [start:conversation]
		ChatClient chat = ChatClient.builder(model)
			.defaultAdvisors(ToolCallAdvisor.builder().build())
			.defaultTools(ConversationSearchTools.create(client, alice))
			.defaultAdvisors(new ConversationSessionAdvisor())
			.build();
		String answer = chat.prompt()
			.user("Did I mention my passport?")
			.advisors(a -> a.param(ChatMemory.CONVERSATION_ID, "trip"))
			.call()
			.content();
		// --8<-- [end:conversation]
		assertTrue(answer.contains("My passport number ends in 4417"), answer);
		assertFalse(answer.contains("office"), "only the current session: " + answer);
		assertFalse(answer.contains("safe"), answer);
		assertFalse(answer.contains("sessionId"), "conversation_search leaves out sessionId: " + answer);
	}

	@Test
	void conversationSearchSaysWhatIsMissingWithoutASession() {
		ScriptedChatModel model = new ScriptedChatModel("conversation_search", "{\"innerThought\":\"t\",\"query\":\"passport\"}");
		ChatClient chat = ChatClient.builder(model)
			.defaultAdvisors(ToolCallAdvisor.builder().build())
			.defaultTools(ConversationSearchTools.create(client, alice))
			.build();
		// A tool context without the session: the model reads what the application must do.
		String answer = chat.prompt().user("Did I mention my passport?").toolContext(Map.of("tenant", "t1")).call().content();
		assertTrue(answer.contains("ConversationSessionAdvisor"), answer);
		assertFalse(answer.contains("4417"), answer);
		// No tool context at all: Spring AI refuses to call a tool that needs one.
		assertThrows(IllegalArgumentException.class,
				() -> chat.prompt().user("Did I mention my passport?").call().content());
	}

}
