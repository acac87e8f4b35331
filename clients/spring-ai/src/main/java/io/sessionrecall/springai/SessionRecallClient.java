package io.sessionrecall.springai;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The session-recall sidecar's HTTP API, as {@code session-recall serve} publishes it in
 * its OpenAPI document ({@code /openapi.json}). {@link #OPERATIONS} lists the operations
 * used here; a contract test checks them against the document.
 *
 * <p>Every call is idempotent (searches, reads, creates of events with their ids, and
 * erasures), so a call that finds the sidecar unavailable is retried within its deadline.
 */
public final class SessionRecallClient {

	/** The operations this client calls: method, path template, query parameters. */
	public static final List<Operation> OPERATIONS = List.of(
			new Operation("POST", "/v1/users/{user}/tools/cross_session_search", List.of("page_size")),
			new Operation("POST", "/v1/users/{user}/sessions/{session}/tools/conversation_search",
					List.of("page_size")),
			new Operation("POST", "/v1/users/{user}/tools/memory_search", List.of()),
			new Operation("POST", "/v1/users/{user}/tools/recall_memories", List.of()),
			new Operation("POST", "/v1/users/{user}/memories", List.of()),
			new Operation("GET", "/v1/users/{user}/sessions", List.of("cursor")),
			new Operation("GET", "/v1/users/{user}/sessions/{session}/events", List.of("cursor")),
			new Operation("POST", "/v1/events", List.of("refresh")),
			new Operation("DELETE", "/v1/users/{user}/sessions/{session}", List.of()),
			new Operation("DELETE", "/v1/users/{user}/events/{event}", List.of()));

	/** One operation of the sidecar's API. */
	public record Operation(String method, String path, List<String> query) {
	}

	/** A stored event as the reads give it back. */
	public record StoredEvent(String eventId, String sessionId, Instant timestamp, String type, String text,
			JsonNode payload) {
	}

	/** An event to store: the fields {@code POST /v1/events} takes. */
	public record NewEvent(String eventId, String userId, String sessionId, Instant timestamp, String type,
			String text, Object payload) {
	}

	private static final JsonMapper JSON = JsonMapper.shared();

	private final URI baseUrl;

	private final String token;

	private final Duration timeout;

	private final int retries;

	private final HttpClient http;

	private SessionRecallClient(Builder builder) {
		String base = Objects.requireNonNull(builder.baseUrl, "baseUrl");
		this.baseUrl = URI.create(base.endsWith("/") ? base.substring(0, base.length() - 1) : base);
		this.token = builder.token;
		this.timeout = builder.timeout;
		this.retries = builder.retries;
		// HTTP/1.1: the sidecar does not take an h2c upgrade, and a request sent with one
		// would reach it without its body.
		this.http = HttpClient.newBuilder()
			.version(HttpClient.Version.HTTP_1_1)
			.connectTimeout(builder.timeout)
			.build();
	}

	/** A client of the sidecar at {@code baseUrl} (for example http://127.0.0.1:8080), no token. */
	public static SessionRecallClient create(String baseUrl) {
		return builder().baseUrl(baseUrl).build();
	}

	public static Builder builder() {
		return new Builder();
	}

	/** The reference's {@code cross_session_search}: the model's arguments as JSON, the tool's output. */
	public String crossSessionSearch(String user, String arguments, Integer pageSize) {
		return tool(path("/v1/users/{user}/tools/cross_session_search", user), pageSize, arguments);
	}

	/** The reference's {@code conversation_search} within one session of the user. */
	public String conversationSearch(String user, String session, String arguments, Integer pageSize) {
		return tool(path("/v1/users/{user}/sessions/{session}/tools/conversation_search", user, session), pageSize,
				arguments);
	}

	/** {@code memory_search}: the user's events by meaning. */
	public String memorySearch(String user, String arguments) {
		return tool(path("/v1/users/{user}/tools/memory_search", user), null, arguments);
	}

	/** {@code recall_memories}: the user's current kept memories by relevance, and turns when asked. */
	public String recallMemories(String user, String arguments) {
		return tool(path("/v1/users/{user}/tools/recall_memories", user), null, arguments);
	}

	/**
	 * Saves a kept memory of the user ({@code statement}, {@code kind}, {@code sources}:
	 * event ids of the user's own, ...): the sidecar's answer (the memory, whether it is
	 * new, what it superseded) as JSON, or an {@code Error: ...} line a model can act on
	 * when the memory is refused (an unknown source, say).
	 */
	public String saveMemory(String user, String memory) {
		HttpResponse<String> response = send("POST", path("/v1/users/{user}/memories", user), memory,
				"application/json");
		int status = response.statusCode();
		if (status == 200 || status == 201) {
			return response.body();
		}
		if (status >= 400 && status < 500 && status != 401 && status != 403) {
			return "Error: " + message(response.body(), status);
		}
		throw failure(response);
	}

	/** Every session id of the user, in session id order. */
	public List<String> sessionIds(String user) {
		List<String> ids = new ArrayList<>();
		String cursor = null;
		do {
			JsonNode page = read(path("/v1/users/{user}/sessions", user), cursor);
			for (JsonNode item : page.path("items").values()) {
				ids.add(item.path("session_id").asString());
			}
			cursor = page.path("next_cursor").asString(null);
		}
		while (cursor != null);
		return ids;
	}

	/** Every event of one session of the user, oldest first. */
	public List<StoredEvent> events(String user, String session) {
		List<StoredEvent> events = new ArrayList<>();
		String cursor = null;
		do {
			JsonNode page = read(path("/v1/users/{user}/sessions/{session}/events", user, session), cursor);
			for (JsonNode item : page.path("items").values()) {
				events.add(new StoredEvent(item.path("event_id").asString(), item.path("session_id").asString(),
						Instant.parse(item.path("timestamp").asString()), item.path("type").asString(null),
						item.path("text").asString(), item.path("payload")));
			}
			cursor = page.path("next_cursor").asString(null);
		}
		while (cursor != null);
		return events;
	}

	/** Stores the events, searchable once this returns; refused events raise {@link SessionRecallException.Refused}. */
	public void store(List<NewEvent> events) {
		if (events.isEmpty()) {
			return;
		}
		List<Map<String, Object>> body = new ArrayList<>();
		for (NewEvent event : events) {
			Map<String, Object> row = new LinkedHashMap<>();
			row.put("event_id", event.eventId());
			row.put("user_id", event.userId());
			row.put("session_id", event.sessionId());
			row.put("timestamp", event.timestamp().toString());
			row.put("type", event.type());
			row.put("text", event.text());
			if (event.payload() != null) {
				row.put("payload", event.payload());
			}
			body.add(row);
		}
		HttpResponse<String> response = send("POST", "/v1/events?refresh=wait_for", JSON.writeValueAsString(body),
				"application/json");
		if (response.statusCode() != 200) {
			throw failure(response);
		}
	}

	/** Erases one session of the user: its events, and everything derived from them. */
	public void deleteSession(String user, String session) {
		erase(path("/v1/users/{user}/sessions/{session}", user, session));
	}

	/** Erases one event of the user. */
	public void deleteEvent(String user, String eventId) {
		erase(path("/v1/users/{user}/events/{event}", user, eventId));
	}

	/** The sidecar's OpenAPI document, as JSON. */
	public JsonNode openApi() {
		HttpResponse<String> response = send("GET", "/openapi.json", null, null);
		if (response.statusCode() != 200) {
			throw failure(response);
		}
		return parse(response.body());
	}

	private void erase(String path) {
		HttpResponse<String> response = send("DELETE", path, null, null);
		if (response.statusCode() != 200) {
			throw failure(response);
		}
	}

	private String tool(String path, Integer pageSize, String arguments) {
		String query = pageSize == null ? "" : "?page_size=" + pageSize;
		HttpResponse<String> response = send("POST", path + query, arguments, "application/json");
		int status = response.statusCode();
		// A mistake in the model's arguments comes back as the line the model reads.
		boolean forModel = status == 200 || (status >= 400 && status < 500 && status != 401 && status != 403
				&& response.headers().firstValue("content-type").orElse("").startsWith("text/plain"));
		if (forModel) {
			return response.body();
		}
		throw failure(response);
	}

	private JsonNode read(String path, String cursor) {
		String query = cursor == null ? "" : "?cursor=" + encode(cursor);
		HttpResponse<String> response = send("GET", path + query, null, null);
		if (response.statusCode() != 200) {
			throw failure(response);
		}
		return parse(response.body());
	}

	private HttpResponse<String> send(String method, String pathAndQuery, String body, String contentType) {
		URI uri = URI.create(this.baseUrl + pathAndQuery);
		HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(this.timeout);
		if (this.token != null) {
			request.header("Authorization", "Bearer " + this.token);
		}
		if (contentType != null) {
			request.header("Content-Type", contentType);
		}
		request.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
				: HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
		long deadline = System.nanoTime() + this.timeout.toNanos() * (this.retries + 1L);
		for (int attempt = 0;; attempt++) {
			HttpResponse<String> response;
			try {
				response = this.http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
			}
			catch (IOException err) {
				if (attempt >= this.retries || System.nanoTime() > deadline) {
					throw new SessionRecallException.Unavailable("The session-recall sidecar at " + this.baseUrl
							+ " did not answer (" + err.getClass().getSimpleName()
							+ "). Start it with `session-recall serve`, or check the URL.", err);
				}
				pause(attempt, null);
				continue;
			}
			catch (InterruptedException err) {
				Thread.currentThread().interrupt();
				throw new SessionRecallException.Unavailable("Interrupted while waiting for the sidecar.", err);
			}
			if (response.statusCode() < 500 || attempt >= this.retries || System.nanoTime() > deadline) {
				return response;
			}
			pause(attempt, response.headers().firstValue("retry-after").orElse(null));
		}
	}

	private static void pause(int attempt, String retryAfter) {
		long millis = Math.min(2000L, 100L << Math.min(attempt, 4));
		if (retryAfter != null) {
			try {
				millis = Math.min(5000L, Long.parseLong(retryAfter.trim()) * 1000L);
			}
			catch (NumberFormatException ignored) {
				// An HTTP date: keep the backoff.
			}
		}
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException err) {
			Thread.currentThread().interrupt();
		}
	}

	private static SessionRecallException failure(HttpResponse<String> response) {
		int status = response.statusCode();
		String message = message(response.body(), status);
		if (status == 401) {
			return new SessionRecallException.Unauthorized(message);
		}
		if (status == 403) {
			return new SessionRecallException.Forbidden(message);
		}
		if (status >= 500) {
			return new SessionRecallException.Unavailable(status, message);
		}
		return new SessionRecallException.Refused(status, message);
	}

	/** The sidecar's {@code error} and {@code hint}, or the first refused event's reason. */
	static String message(String body, int status) {
		try {
			JsonNode json = JSON.readTree(body);
			if (json.path("error").isString()) {
				String hint = json.path("hint").asString(null);
				return json.path("error").asString() + (hint == null ? "" : " " + hint);
			}
			for (JsonNode result : json.path("results").values()) {
				if (!result.path("reason").isMissingNode() && !result.path("reason").isNull()) {
					return "Event " + result.path("event_id").asString("?") + " was refused: "
							+ result.path("reason").asString();
				}
			}
		}
		catch (JacksonException notJson) {
			// Plain text: the body is the message.
		}
		String text = body == null ? "" : body.strip();
		return text.isEmpty() ? "The sidecar answered HTTP " + status + "." : text;
	}

	private static JsonNode parse(String body) {
		try {
			return JSON.readTree(body);
		}
		catch (JacksonException err) {
			throw new SessionRecallException.Unavailable("The sidecar's answer is not JSON: is the URL the sidecar's?",
					err);
		}
	}

	private static String path(String template, String... values) {
		StringBuilder out = new StringBuilder();
		int next = 0;
		int at = 0;
		while (at < template.length()) {
			int open = template.indexOf('{', at);
			if (open < 0) {
				out.append(template, at, template.length());
				break;
			}
			out.append(template, at, open);
			int close = template.indexOf('}', open);
			out.append(encode(Objects.requireNonNull(values[next++], template.substring(open + 1, close))));
			at = close + 1;
		}
		return out.toString();
	}

	private static String encode(String value) {
		return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
	}

	/** Options of a client: the sidecar's URL, a serve token, a deadline per call, retries. */
	public static final class Builder {

		private String baseUrl;

		private String token;

		private Duration timeout = Duration.ofSeconds(30);

		private int retries = 2;

		private Builder() {
		}

		public Builder baseUrl(String baseUrl) {
			this.baseUrl = baseUrl;
			return this;
		}

		/** A serve token: the operator's, or one bound to a user ({@code session-recall tokens issue}). */
		public Builder token(String token) {
			this.token = token;
			return this;
		}

		public Builder timeout(Duration timeout) {
			this.timeout = Objects.requireNonNull(timeout, "timeout");
			return this;
		}

		/** How many times a call that found the sidecar unavailable is sent again (default 2). */
		public Builder retries(int retries) {
			if (retries < 0) {
				throw new IllegalArgumentException("retries must be 0 or more");
			}
			this.retries = retries;
			return this;
		}

		public SessionRecallClient build() {
			return new SessionRecallClient(this);
		}

	}

	@Override
	public String toString() {
		StringJoiner out = new StringJoiner(", ", "SessionRecallClient[", "]");
		out.add(this.baseUrl.toString());
		out.add(this.token == null ? "no token" : "token set");
		return out.toString();
	}

}
