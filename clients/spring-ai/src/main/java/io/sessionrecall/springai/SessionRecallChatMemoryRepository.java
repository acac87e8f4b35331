package io.sessionrecall.springai;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.MessageType;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import tools.jackson.databind.JsonNode;

import io.sessionrecall.springai.SessionRecallClient.NewEvent;
import io.sessionrecall.springai.SessionRecallClient.StoredEvent;

/**
 * Spring AI's {@link ChatMemoryRepository} over the sidecar: a conversation is one
 * session of the bound user, and its messages are that user's events, so the tools of
 * this module search the same history that {@code MessageWindowChatMemory} keeps.
 *
 * <p>{@link #saveAll} stores the conversation as given. When the stored messages are
 * a prefix of it, only the new ones are sent; when the front was trimmed (a window
 * moving on), the trimmed events are erased; otherwise the session is erased and
 * written again. Erased events stay erased: new messages get new event ids.
 */
public final class SessionRecallChatMemoryRepository implements ChatMemoryRepository {

	private static final Map<MessageType, String> TYPES = Map.of(MessageType.USER, "user_message",
			MessageType.ASSISTANT, "assistant_message", MessageType.SYSTEM, "system_message", MessageType.TOOL,
			"tool_response");

	private final SessionRecallClient client;

	private final String userId;

	private SessionRecallChatMemoryRepository(SessionRecallClient client, String userId) {
		this.client = client;
		this.userId = userId;
	}

	/** The conversations of {@code userId}, fixed for the repository's lifetime. */
	public static SessionRecallChatMemoryRepository create(SessionRecallClient client, String userId) {
		return new SessionRecallChatMemoryRepository(Objects.requireNonNull(client, "client"),
				Objects.requireNonNull(userId, "userId"));
	}

	@Override
	public List<String> findConversationIds() {
		return this.client.sessionIds(this.userId);
	}

	@Override
	public List<Message> findByConversationId(String conversationId) {
		List<Message> messages = new ArrayList<>();
		for (StoredEvent event : this.client.events(this.userId, conversationId)) {
			messages.add(message(event));
		}
		return messages;
	}

	@Override
	public void saveAll(String conversationId, List<Message> messages) {
		Objects.requireNonNull(conversationId, "conversationId");
		List<StoredEvent> stored = this.client.events(this.userId, conversationId);
		List<Message> storedMessages = stored.stream().map(SessionRecallChatMemoryRepository::message).toList();
		int trimmed = trimmedFront(storedMessages, messages);
		List<Message> toSend;
		Instant after;
		if (trimmed >= 0) {
			for (StoredEvent gone : stored.subList(0, trimmed)) {
				this.client.deleteEvent(this.userId, gone.eventId());
			}
			toSend = messages.subList(stored.size() - trimmed, messages.size());
			after = stored.isEmpty() ? null : stored.get(stored.size() - 1).timestamp();
		}
		else {
			this.client.deleteSession(this.userId, conversationId);
			toSend = messages;
			after = null;
		}
		Instant start = Instant.now().truncatedTo(ChronoUnit.MILLIS);
		if (after != null && !start.isAfter(after)) {
			start = after.plusMillis(1);
		}
		List<NewEvent> events = new ArrayList<>();
		for (int i = 0; i < toSend.size(); i++) {
			Message message = toSend.get(i);
			events.add(new NewEvent(UUID.randomUUID().toString(), this.userId, conversationId, start.plusMillis(i),
					TYPES.get(message.getMessageType()), text(message), payload(message)));
		}
		this.client.store(events);
	}

	@Override
	public void deleteByConversationId(String conversationId) {
		this.client.deleteSession(this.userId, Objects.requireNonNull(conversationId, "conversationId"));
	}

	/** How many stored messages the new list drops from the front while keeping the rest in order, or -1. */
	static int trimmedFront(List<Message> stored, List<Message> messages) {
		for (int k = 0; k <= stored.size(); k++) {
			int kept = stored.size() - k;
			if (kept <= messages.size() && stored.subList(k, stored.size()).equals(messages.subList(0, kept))) {
				return k;
			}
		}
		return -1;
	}

	private static String text(Message message) {
		if (message instanceof ToolResponseMessage tool) {
			return String.join("\n", tool.getResponses().stream().map(ToolResponseMessage.ToolResponse::responseData).toList());
		}
		return message.getText() == null ? "" : message.getText();
	}

	private static Object payload(Message message) {
		if (message instanceof AssistantMessage assistant && assistant.hasToolCalls()) {
			List<Map<String, String>> calls = new ArrayList<>();
			for (AssistantMessage.ToolCall call : assistant.getToolCalls()) {
				calls.add(ordered("id", call.id(), "type", call.type(), "name", call.name(), "arguments",
						call.arguments()));
			}
			return Map.of("toolCalls", calls);
		}
		if (message instanceof ToolResponseMessage tool) {
			List<Map<String, String>> responses = new ArrayList<>();
			for (ToolResponseMessage.ToolResponse response : tool.getResponses()) {
				responses.add(ordered("id", response.id(), "name", response.name(), "responseData",
						response.responseData()));
			}
			return Map.of("responses", responses);
		}
		return null;
	}

	private static Message message(StoredEvent event) {
		String type = event.type() == null ? "" : event.type();
		JsonNode payload = event.payload();
		return switch (type) {
			case "user_message" -> new UserMessage(event.text());
			case "system_message" -> new SystemMessage(event.text());
			case "tool_response" -> {
				List<ToolResponseMessage.ToolResponse> responses = new ArrayList<>();
				for (JsonNode r : payload.path("responses").values()) {
					responses.add(new ToolResponseMessage.ToolResponse(r.path("id").asString(), r.path("name").asString(),
							r.path("responseData").asString()));
				}
				yield ToolResponseMessage.builder().responses(responses).build();
			}
			default -> {
				List<AssistantMessage.ToolCall> calls = new ArrayList<>();
				for (JsonNode c : payload.path("toolCalls").values()) {
					calls.add(new AssistantMessage.ToolCall(c.path("id").asString(), c.path("type").asString(),
							c.path("name").asString(), c.path("arguments").asString()));
				}
				yield calls.isEmpty() ? new AssistantMessage(event.text())
						: AssistantMessage.builder().content(event.text()).toolCalls(calls).build();
			}
		};
	}

	private static Map<String, String> ordered(String... pairs) {
		Map<String, String> out = new LinkedHashMap<>();
		for (int i = 0; i < pairs.length; i += 2) {
			out.put(pairs[i], pairs[i + 1]);
		}
		return out;
	}

}
