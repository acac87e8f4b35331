package io.sessionrecall.springai;

import java.util.Objects;

import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;

/**
 * The reference's {@code conversation_search}, for the live agent: one keyword, one
 * session. The user is fixed when the instance is built; the session comes from the
 * request's {@link ToolContext} under {@link #SESSION_ID}, which
 * {@link ConversationSessionAdvisor} fills from the chat memory's conversation id (or
 * the application with {@code .toolContext(Map.of(SESSION_ID, id))}). The model sees
 * neither.
 */
public final class ConversationSearchTools {

	/** The tool context key that holds the current session's id. */
	public static final String SESSION_ID = "session_recall_session_id";

	static final String DESCRIPTION = "Search the full prior conversation history using case-insensitive keyword "
			+ "matching. Returns paginated results ordered chronologically. Only the current conversation is "
			+ "searched; the application chooses it.";

	private final SessionRecallClient client;

	private final String userId;

	private final Integer pageSize;

	private ConversationSearchTools(SessionRecallClient client, String userId, Integer pageSize) {
		this.client = client;
		this.userId = userId;
		this.pageSize = pageSize;
	}

	public static ConversationSearchTools create(SessionRecallClient client, String userId) {
		return new ConversationSearchTools(Objects.requireNonNull(client, "client"),
				Objects.requireNonNull(userId, "userId"), null);
	}

	/** The same tools with another page size (the sidecar checks the bounds). */
	public ConversationSearchTools withPageSize(int pageSize) {
		return new ConversationSearchTools(this.client, this.userId, pageSize);
	}

	@Tool(name = "conversation_search", description = DESCRIPTION, resultConverter = PlainText.class)
	public String conversationSearch(
			@ToolParam(description = "Deep inner monologue private to you only.") String innerThought,
			@ToolParam(description = "Keyword to search for in the conversation history.") String query,
			@ToolParam(description = "Page of results to retrieve (0-indexed). Omit or use 0 for the first page.",
					required = false) Integer page,
			ToolContext toolContext) {
		Object session = toolContext == null ? null : toolContext.getContext().get(SESSION_ID);
		if (!(session instanceof String sessionId) || sessionId.isBlank()) {
			throw new IllegalStateException("conversation_search has no current session: register "
					+ "ConversationSessionAdvisor with the chat memory's conversation id, or pass it as the tool "
					+ "context's " + SESSION_ID + ".");
		}
		String arguments = new ToolArguments().put("innerThought", innerThought)
			.put("query", query)
			.put("page", page)
			.json();
		return this.client.conversationSearch(this.userId, sessionId, arguments, this.pageSize);
	}

}
