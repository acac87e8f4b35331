package io.sessionrecall.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.MessageType;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;

import io.sessionrecall.springai.SessionRecallClient.StoredEvent;

/**
 * The cases of Spring AI's own repository tests (the JDBC repository's), run against the
 * sidecar: where they read the table, these read the stored events.
 */
class SessionRecallChatMemoryRepositoryTest {

	SessionRecallClient client;

	String user;

	ChatMemoryRepository repository;

	@BeforeEach
	void repository() {
		this.client = Sidecar.operator();
		this.user = Sidecar.user("memory");
		this.repository = SessionRecallChatMemoryRepository.create(this.client, this.user);
	}

	@Test
	void correctChatMemoryRepositoryInstance() {
		assertTrue(this.repository instanceof ChatMemoryRepository);
	}

	@ParameterizedTest
	@CsvSource({ "Message from assistant,ASSISTANT,assistant_message", "Message from user,USER,user_message",
			"Message from system,SYSTEM,system_message" })
	void saveMessagesSingleMessage(String content, MessageType messageType, String eventType) {
		String conversationId = UUID.randomUUID().toString();
		Message message = switch (messageType) {
			case ASSISTANT -> new AssistantMessage(content + " - " + conversationId);
			case USER -> new UserMessage(content + " - " + conversationId);
			case SYSTEM -> new SystemMessage(content + " - " + conversationId);
			case TOOL -> throw new IllegalArgumentException("TOOL message type not supported in this test");
		};

		this.repository.saveAll(conversationId, List.of(message));

		List<StoredEvent> stored = this.client.events(this.user, conversationId);
		assertEquals(1, stored.size());
		assertEquals(conversationId, stored.get(0).sessionId());
		assertEquals(message.getText(), stored.get(0).text());
		assertEquals(eventType, stored.get(0).type());
		assertTrue(stored.get(0).timestamp() != null);
	}

	@Test
	void saveMessagesMultipleMessages() {
		String conversationId = UUID.randomUUID().toString();
		List<Message> messages = List.of(new AssistantMessage("Message from assistant - " + conversationId),
				new UserMessage("Message from user - " + conversationId),
				new SystemMessage("Message from system - " + conversationId));

		this.repository.saveAll(conversationId, messages);

		List<StoredEvent> stored = this.client.events(this.user, conversationId);
		assertEquals(messages.size(), stored.size());
		for (int i = 0; i < messages.size(); i++) {
			assertEquals(conversationId, stored.get(i).sessionId());
			assertEquals(messages.get(i).getText(), stored.get(i).text());
		}
		assertEquals(messages.size(), this.repository.findByConversationId(conversationId).size());

		this.repository.saveAll(conversationId, List.of(new UserMessage("Hello")));

		assertEquals(1, this.repository.findByConversationId(conversationId).size());
		assertEquals("Hello", this.repository.findByConversationId(conversationId).get(0).getText());
	}

	@Test
	void findMessagesByConversationId() {
		String conversationId = UUID.randomUUID().toString();
		List<Message> messages = List.of(new AssistantMessage("Message from assistant 1 - " + conversationId),
				new AssistantMessage("Message from assistant 2 - " + conversationId),
				new UserMessage("Message from user - " + conversationId),
				new SystemMessage("Message from system - " + conversationId));

		this.repository.saveAll(conversationId, messages);

		List<Message> results = this.repository.findByConversationId(conversationId);
		assertEquals(messages.size(), results.size());
		assertEquals(messages, results);
	}

	@Test
	void deleteMessagesByConversationId() {
		String conversationId = UUID.randomUUID().toString();
		List<Message> messages = List.of(new AssistantMessage("Message from assistant - " + conversationId),
				new UserMessage("Message from user - " + conversationId),
				new SystemMessage("Message from system - " + conversationId));

		this.repository.saveAll(conversationId, messages);

		this.repository.deleteByConversationId(conversationId);

		assertEquals(0, this.client.events(this.user, conversationId).size());
		assertTrue(this.repository.findByConversationId(conversationId).isEmpty());
	}

	@Test
	void testMessageOrder() {
		String conversationId = UUID.randomUUID().toString();
		List<Message> ordered = List.of(new UserMessage("1-First message"), new AssistantMessage("2-Second message"),
				new UserMessage("3-Third message"), new SystemMessage("4-Fourth message"));
		this.repository.saveAll(conversationId, ordered);

		List<String> contents = this.repository.findByConversationId(conversationId)
			.stream()
			.map(Message::getText)
			.toList();

		assertEquals(List.of("1-First message", "2-Second message", "3-Third message", "4-Fourth message"), contents);
	}

	@Test
	void findConversationIds() {
		this.repository.saveAll("conversation-b", List.of(new UserMessage("b")));
		this.repository.saveAll("conversation-a", List.of(new UserMessage("a")));
		assertEquals(List.of("conversation-a", "conversation-b"), this.repository.findConversationIds());
	}

	@Test
	void toolCallsAndResponsesComeBackAsSaved() {
		String conversationId = UUID.randomUUID().toString();
		List<Message> messages = List.of(new UserMessage("What's the weather in Paris?"),
				AssistantMessage.builder()
					.content("")
					.toolCalls(List.of(new AssistantMessage.ToolCall("call-1", "function", "weather",
							"{\"city\":\"Paris\"}")))
					.build(),
				ToolResponseMessage.builder()
					.responses(List.of(new ToolResponseMessage.ToolResponse("call-1", "weather", "{\"temp\":21}")))
					.build(),
				new AssistantMessage("It is 21 degrees in Paris."));

		this.repository.saveAll(conversationId, messages);

		assertEquals(messages, this.repository.findByConversationId(conversationId));
		assertEquals("tool_response", this.client.events(this.user, conversationId).get(2).type());
	}

}
