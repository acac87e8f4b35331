package io.sessionrecall.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.support.ToolCallbacks;
import org.springframework.ai.tool.ToolCallback;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class CrossSessionRecallToolsTest {

	static final Instant START = Instant.parse("2026-03-01T10:00:00Z");

	static String alice;

	static String bob;

	static ToolCallback tool;

	@BeforeAll
	static void seed() {
		SessionRecallClient client = Sidecar.operator();
		alice = Sidecar.user("alice");
		bob = Sidecar.user("bob");
		client.store(Sidecar.events(alice, START, //
				"s1", "user_message", "The invoice for the harbour office is late", //
				"s1", "assistant_message", "I will chase the harbour invoice", //
				"s2", "user_message", "Book the ferry to the harbour", //
				"s2", "user_message", "The ferry invoice arrived"));
		client.store(Sidecar.events(bob, START, "b1", "user_message", "Bob's harbour invoice is secret"));
		ToolCallback[] callbacks = ToolCallbacks.from(CrossSessionRecallTools.builder(client, alice).pageSize(20).build());
		assertEquals(1, callbacks.length);
		tool = callbacks[0];
	}

	static List<JsonNode> rows(String output) {
		JsonNode array = JsonMapper.shared().readTree(output);
		assertTrue(array.isArray(), output);
		return new ArrayList<>(array.values());
	}

	static List<String> texts(String output) {
		return rows(output).stream().map(r -> r.path("text").asString()).toList();
	}

	@Test
	void theCallbackIsNamedAsTheReferenceAndTakesNoUser() {
		assertEquals("cross_session_search", tool.getToolDefinition().name());
		JsonNode schema = JsonMapper.shared().readTree(tool.getToolDefinition().inputSchema());
		Set<String> names = new TreeSet<>();
		schema.path("properties").propertyNames().forEach(names::add);
		assertEquals(new TreeSet<>(List.of("innerThought", "query", "matchMode", "since", "page")), names);
		Set<String> required = new TreeSet<>();
		schema.path("required").values().forEach(n -> required.add(n.asString()));
		assertEquals(new TreeSet<>(List.of("innerThought", "query")), required);
	}

	@Test
	void anyFindsEitherTermInChronologicalOrderWithTheReferenceFields() {
		String output = tool.call("{\"innerThought\":\"recap\",\"query\":\"invoice, ferry\"}");
		List<JsonNode> rows = rows(output);
		assertEquals(List.of("The invoice for the harbour office is late", "I will chase the harbour invoice",
				"Book the ferry to the harbour", "The ferry invoice arrived"), texts(output));
		JsonNode first = rows.get(0);
		assertEquals(List.of("sessionId", "timestamp", "type", "text"), List.copyOf(first.propertyNames()));
		assertEquals("s1", first.path("sessionId").asString());
		assertEquals("2026-03-01T10:00:00Z", first.path("timestamp").asString());
		assertEquals("user_message", first.path("type").asString());
		assertFalse(output.contains("secret"), output);
		assertFalse(output.contains("recap"), "innerThought is never returned");
	}

	@Test
	void allNeedsEveryTerm() {
		String output = tool.call("{\"innerThought\":\"t\",\"query\":\"ferry,invoice\",\"matchMode\":\"all\"}");
		assertEquals(List.of("The ferry invoice arrived"), texts(output));
	}

	@Test
	void sinceKeepsLaterEvents() {
		String output = tool.call("{\"innerThought\":\"t\",\"query\":\"harbour\",\"since\":\"2026-03-01T10:00:02Z\"}");
		assertEquals(List.of("Book the ferry to the harbour"), texts(output));
	}

	@Test
	void aNegativePageIsTheFirstPage() {
		String first = tool.call("{\"innerThought\":\"t\",\"query\":\"harbour\",\"page\":0}");
		String negative = tool.call("{\"innerThought\":\"t\",\"query\":\"harbour\",\"page\":-3}");
		assertEquals(first, negative);
		assertEquals(3, rows(first).size());
	}

	@Test
	void nothingFoundIsTheReferenceSentence() {
		assertEquals("No results found.", tool.call("{\"innerThought\":\"t\",\"query\":\"zeppelin\"}"));
	}

	@Test
	void anEmptyQueryIsRefusedWithTheReferenceError() {
		String output = tool.call("{\"innerThought\":\"t\",\"query\":\" , ,\"}");
		assertTrue(output.startsWith("Error: "), output);
	}

	@Test
	void aMalformedSinceNamesTheFormat() {
		String output = tool.call("{\"innerThought\":\"t\",\"query\":\"harbour\",\"since\":\"last tuesday\"}");
		assertTrue(output.startsWith("Error: "), output);
		assertTrue(output.contains("ISO-8601") || output.contains("2026-07-01T00:00:00Z"), output);
	}

}
