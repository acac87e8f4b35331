package io.sessionrecall.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.UserMessage;

/** MessageWindowChatMemory keeps and trims a conversation over the sidecar as over Spring AI's in-memory one. */
class MessageWindowChatMemoryTest {

	@Test
	void keepsAndTrimsAsTheInMemoryRepositoryDoes() {
		SessionRecallClient client = Sidecar.operator();
		String user = Sidecar.user("window");
		// --8<-- [start:memory]
		MessageWindowChatMemory ours = MessageWindowChatMemory.builder()
			.chatMemoryRepository(SessionRecallChatMemoryRepository.create(client, user))
			.maxMessages(4)
			.build();
		// --8<-- [end:memory]
		MessageWindowChatMemory reference = MessageWindowChatMemory.builder()
			.chatMemoryRepository(new InMemoryChatMemoryRepository())
			.maxMessages(4)
			.build();
		List<List<Message>> turns = List.of(List.of(new SystemMessage("You are a travel agent.")),
				List.of(new UserMessage("Book a ferry to Oslo"), new AssistantMessage("Which day?")),
				List.of(new UserMessage("Friday")), List.of(new AssistantMessage("Booked for Friday.")),
				List.of(new UserMessage("And a hotel"), new AssistantMessage("Which area?")),
				List.of(new SystemMessage("Prefer rail where it is faster.")), List.of(new UserMessage("Near the harbour")));
		for (List<Message> turn : turns) {
			ours.add("trip", turn);
			reference.add("trip", turn);
			assertEquals(reference.get("trip"), ours.get("trip"));
		}
		assertEquals(4, ours.get("trip").size());
		// What the window dropped is gone from the sidecar too, not only from the window.
		List<String> stored = client.events(user, "trip").stream().map(SessionRecallClient.StoredEvent::text).toList();
		assertEquals(reference.get("trip").stream().map(Message::getText).toList(), stored);

		ours.clear("trip");
		reference.clear("trip");
		assertEquals(reference.get("trip"), ours.get("trip"));
		assertEquals(0, client.events(user, "trip").size());
	}

}
