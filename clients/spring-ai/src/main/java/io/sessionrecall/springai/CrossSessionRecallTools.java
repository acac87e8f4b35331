package io.sessionrecall.springai;

import java.util.Objects;

import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;

/**
 * The reference's {@code cross_session_search}, pushed down to Elasticsearch by the
 * sidecar. The user is fixed when the instance is built and is never a tool parameter:
 * <pre>{@code
 * var tools = CrossSessionRecallTools.builder(client, "alice").pageSize(20).build();
 * ChatClient.builder(chatModel).defaultTools(tools).build();
 * }</pre>
 */
public final class CrossSessionRecallTools {

	static final String DESCRIPTION = "Search across ALL of a user's sessions (not just the current one) for events "
			+ "matching the given criteria. Intended for maintenance/analysis agents that need historical signal "
			+ "spanning many past conversations, not for use by a live conversational agent (which should prefer "
			+ "conversation_search). Returns paginated results ordered chronologically. "
			+ "Returns a JSON array of {sessionId, timestamp, type, text} objects, or 'No results found.'. "
			+ "The user is fixed by the application: no argument can select another user.";

	private final SessionRecallClient client;

	private final String userId;

	private final Integer pageSize;

	private CrossSessionRecallTools(Builder builder) {
		this.client = builder.client;
		this.userId = builder.userId;
		this.pageSize = builder.pageSize;
	}

	/** Tools over {@code client} for {@code userId}, fixed for the instance's lifetime. */
	public static Builder builder(SessionRecallClient client, String userId) {
		return new Builder(client, userId);
	}

	@Tool(name = "cross_session_search", description = DESCRIPTION, resultConverter = PlainText.class)
	public String crossSessionSearch(
			@ToolParam(description = "Deep inner monologue private to you only.") String innerThought,
			@ToolParam(description = "Case-insensitive keyword or phrase to search for. Supply multiple, "
					+ "comma-separated keywords to search for more than one term at once (up to 20 terms per call).") String query,
			@ToolParam(description = "'any' (default) or 'all': how multiple comma-separated keywords in 'query' "
					+ "combine.", required = false) String matchMode,
			@ToolParam(description = "ISO-8601 instant (e.g. '2026-07-01T00:00:00Z'); only events at or after "
					+ "this time are considered. Omit to search the full history.", required = false) String since,
			@ToolParam(description = "Page of results to retrieve (0-indexed). Omit or use 0 for the first page.",
					required = false) Integer page) {
		String arguments = new ToolArguments().put("innerThought", innerThought)
			.put("query", query)
			.put("matchMode", matchMode)
			.put("since", since)
			.put("page", page)
			.json();
		return this.client.crossSessionSearch(this.userId, arguments, this.pageSize);
	}

	/** The user and the page size; nothing the model sends can change them. */
	public static final class Builder {

		private final SessionRecallClient client;

		private final String userId;

		private Integer pageSize;

		private Builder(SessionRecallClient client, String userId) {
			this.client = Objects.requireNonNull(client, "client");
			this.userId = Objects.requireNonNull(userId, "userId");
			if (userId.isBlank()) {
				throw new IllegalArgumentException("userId must not be blank");
			}
		}

		/** Events per page (the sidecar's default when unset; it checks the bounds). */
		public Builder pageSize(int pageSize) {
			if (pageSize < 1) {
				throw new IllegalArgumentException("pageSize must be 1 or more");
			}
			this.pageSize = pageSize;
			return this;
		}

		public CrossSessionRecallTools build() {
			return new CrossSessionRecallTools(this);
		}

	}

}
