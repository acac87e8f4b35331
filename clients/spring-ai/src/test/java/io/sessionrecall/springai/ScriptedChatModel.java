package io.sessionrecall.springai;

import java.util.ArrayList;
import java.util.List;

import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

/** A model that first calls one tool with fixed JSON arguments, then answers with what the tool returned. */
final class ScriptedChatModel implements ChatModel {

	final List<Prompt> prompts = new ArrayList<>();

	private final String toolName;

	private final String arguments;

	ScriptedChatModel(String toolName, String arguments) {
		this.toolName = toolName;
		this.arguments = arguments;
	}

	@Override
	public ChatResponse call(Prompt prompt) {
		this.prompts.add(prompt);
		List<Message> messages = prompt.getInstructions();
		Message last = messages.get(messages.size() - 1);
		if (last instanceof ToolResponseMessage tool) {
			return new ChatResponse(
					List.of(new Generation(new AssistantMessage("From memory: " + tool.getResponses().get(0).responseData()))));
		}
		AssistantMessage call = AssistantMessage.builder()
			.content("")
			.toolCalls(List.of(new AssistantMessage.ToolCall("call-1", "function", this.toolName, this.arguments)))
			.build();
		return new ChatResponse(List.of(new Generation(call)));
	}

	@Override
	public ChatOptions getDefaultOptions() {
		return ToolCallingChatOptions.builder().build();
	}

	@Override
	public ChatOptions getOptions() {
		return getDefaultOptions();
	}

}
