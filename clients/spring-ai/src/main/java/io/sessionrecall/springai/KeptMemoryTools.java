package io.sessionrecall.springai;

import java.util.List;
import java.util.Objects;

import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;

/**
 * Kept memories for agents: {@code recall_memories} for the live agent, and
 * {@code save_memory} for a background agent that mines the user's history with
 * {@code cross_session_search}. The user is fixed when the instance is built.
 */
public final class KeptMemoryTools {

	static final String RECALL = "Recall what is already known about this user: kept memories (decisions, "
			+ "corrections, instructions, preferences, facts), current ones first by relevance; with turns > 0, "
			+ "also the user's past turns that match. The user is fixed by the application.";

	static final String SAVE = "Keep a memory of this user: a short standalone statement, its kind (decision, "
			+ "correction, instruction, preference or fact) and the ids of the user's events it comes from. "
			+ "A memory that supersedes another names it; the older one is kept as history.";

	private final SessionRecallClient client;

	private final String userId;

	private KeptMemoryTools(SessionRecallClient client, String userId) {
		this.client = client;
		this.userId = userId;
	}

	public static KeptMemoryTools create(SessionRecallClient client, String userId) {
		return new KeptMemoryTools(Objects.requireNonNull(client, "client"), Objects.requireNonNull(userId, "userId"));
	}

	@Tool(name = "recall_memories", description = RECALL, resultConverter = PlainText.class)
	public String recallMemories(
			@ToolParam(description = "Deep inner monologue private to you only.") String innerThought,
			@ToolParam(description = "What to recall, in natural language.") String query,
			@ToolParam(description = "Kinds to keep: decision, correction, instruction, preference, fact.",
					required = false) List<String> kinds,
			@ToolParam(description = "Also superseded memories (history), after the current ones.",
					required = false) Boolean includeSuperseded,
			@ToolParam(description = "How many memories (1 to 20).", required = false) Integer limit,
			@ToolParam(description = "How many matching past turns to add (0 to 10).", required = false) Integer turns) {
		String arguments = new ToolArguments().put("innerThought", innerThought)
			.put("query", query)
			.put("kinds", kinds)
			.put("includeSuperseded", includeSuperseded)
			.put("limit", limit)
			.put("turns", turns)
			.json();
		return this.client.recallMemories(this.userId, arguments);
	}

	@Tool(name = "save_memory", description = SAVE, resultConverter = PlainText.class)
	public String saveMemory(@ToolParam(description = "The memory: short and standalone.") String statement,
			@ToolParam(description = "decision, correction, instruction, preference or fact.") String kind,
			@ToolParam(description = "Ids of this user's events the memory comes from, at least one.") List<String> sources,
			@ToolParam(description = "The memoryId this one replaces.", required = false) String supersedes,
			@ToolParam(description = "What it is about, for superseding.", required = false) String subject) {
		String memory = new ToolArguments().put("statement", statement)
			.put("kind", kind)
			.put("sources", sources)
			.put("supersedes", supersedes)
			.put("subject", subject)
			.json();
		return this.client.saveMemory(this.userId, memory);
	}

}
