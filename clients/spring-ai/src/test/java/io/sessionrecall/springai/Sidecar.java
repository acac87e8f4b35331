package io.sessionrecall.springai;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.Assumptions;

import io.sessionrecall.springai.SessionRecallClient.NewEvent;

/**
 * The real sidecar the tests run against: {@code session-recall serve} on a real node,
 * started by the project's test command, which passes its URL and tokens as system
 * properties.
 */
final class Sidecar {

	private Sidecar() {
	}

	static String url() {
		String url = System.getProperty("session.recall.url", "");
		Assumptions.assumeFalse(url.isBlank() || url.startsWith("${"),
				"No sidecar: run these tests through the project's test command, or pass "
						+ "-Dsession.recall.url=http://127.0.0.1:PORT -Dsession.recall.token=OPERATOR_TOKEN");
		return url;
	}

	private static String property(String name) {
		String value = System.getProperty(name, "");
		return value.isBlank() || value.startsWith("${") ? null : value;
	}

	/** A client with the operator's token: any user. */
	static SessionRecallClient operator() {
		return SessionRecallClient.builder().baseUrl(url()).token(property("session.recall.token")).build();
	}

	/** A client with a token bound to the user "alice". */
	static SessionRecallClient alice() {
		String token = property("session.recall.alice.token");
		Assumptions.assumeTrue(token != null, "No token for alice: pass -Dsession.recall.alice.token");
		return SessionRecallClient.builder().baseUrl(url()).token(token).build();
	}

	/** A user id of the test's own. */
	static String user(String prefix) {
		return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
	}

	/** Events to store: (session, type, text) in order, one second apart from {@code start}. */
	static List<NewEvent> events(String user, Instant start, String... sessionTypeText) {
		List<NewEvent> events = new ArrayList<>();
		for (int i = 0; i < sessionTypeText.length; i += 3) {
			events.add(new NewEvent(user + "-e" + i / 3, user, sessionTypeText[i], start.plusSeconds(i / 3),
					sessionTypeText[i + 1], sessionTypeText[i + 2], null));
		}
		return events;
	}

}
