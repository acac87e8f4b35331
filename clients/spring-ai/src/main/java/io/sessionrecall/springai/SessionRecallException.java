package io.sessionrecall.springai;

/**
 * A request the sidecar refused or could not answer. The message is the sidecar's own
 * ({@code error}, then its {@code hint}), so it says what to do next.
 */
public class SessionRecallException extends RuntimeException {

	private final int status;

	public SessionRecallException(int status, String message) {
		super(message);
		this.status = status;
	}

	public SessionRecallException(String message, Throwable cause) {
		super(message, cause);
		this.status = 0;
	}

	/** The HTTP status, or 0 when no answer came. */
	public int status() {
		return this.status;
	}

	/** 401: the token is missing or wrong. */
	public static final class Unauthorized extends SessionRecallException {

		public Unauthorized(String message) {
			super(401, message);
		}

	}

	/** 403: the token is valid but not for this user or action. */
	public static final class Forbidden extends SessionRecallException {

		public Forbidden(String message) {
			super(403, message);
		}

	}

	/** Another 4xx: the request itself is wrong; sending it again cannot help. */
	public static final class Refused extends SessionRecallException {

		public Refused(int status, String message) {
			super(status, message);
		}

	}

	/** 5xx or no answer: the sidecar or Elasticsearch is unavailable; retry later. */
	public static final class Unavailable extends SessionRecallException {

		public Unavailable(int status, String message) {
			super(status, message);
		}

		public Unavailable(String message, Throwable cause) {
			super(message, cause);
		}

	}

}
