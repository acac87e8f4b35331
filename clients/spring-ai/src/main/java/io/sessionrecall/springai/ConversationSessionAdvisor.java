package io.sessionrecall.springai;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.client.advisor.api.Advisor;
import org.springframework.ai.chat.client.advisor.api.CallAdvisor;
import org.springframework.ai.chat.client.advisor.api.CallAdvisorChain;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

/**
 * Puts the chat memory's conversation id ({@link ChatMemory#CONVERSATION_ID}, as
 * {@code MessageChatMemoryAdvisor} takes it) into the tool context, where
 * {@link ConversationSearchTools} reads its session. The model never sees it:
 * <pre>{@code
 * chatClient.prompt().user(question)
 *     .advisors(a -> a.param(ChatMemory.CONVERSATION_ID, sessionId))
 *     .call();
 * }</pre>
 */
public final class ConversationSessionAdvisor implements CallAdvisor {

	@Override
	public ChatClientResponse adviseCall(ChatClientRequest request, CallAdvisorChain chain) {
		Object conversationId = request.context().get(ChatMemory.CONVERSATION_ID);
		if (!(conversationId instanceof String session) || !(request.prompt().getOptions() instanceof ToolCallingChatOptions options)) {
			return chain.nextCall(request);
		}
		Map<String, Object> context = new LinkedHashMap<>();
		if (options.getToolContext() != null) {
			context.putAll(options.getToolContext());
		}
		context.put(ConversationSearchTools.SESSION_ID, session);
		ChatOptions scoped = options.mutate().toolContext(context).build();
		Prompt prompt = request.prompt().mutate().chatOptions(scoped).build();
		return chain.nextCall(request.mutate().prompt(prompt).build());
	}

	@Override
	public String getName() {
		return "SessionRecallConversationSession";
	}

	@Override
	public int getOrder() {
		// After the chat memory advisor, before the tool calling one.
		return Advisor.DEFAULT_CHAT_MEMORY_PRECEDENCE_ORDER + 50;
	}

}
