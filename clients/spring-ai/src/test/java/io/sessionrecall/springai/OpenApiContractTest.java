package io.sessionrecall.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.springframework.ai.support.ToolCallbacks;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Fails when the client and the sidecar's OpenAPI document drift apart. */
class OpenApiContractTest {

	@Test
	void everyOperationTheClientCallsIsPublishedWithItsQueryParameters() {
		JsonNode document = Sidecar.operator().openApi();
		for (SessionRecallClient.Operation operation : SessionRecallClient.OPERATIONS) {
			JsonNode spec = document.path("paths").path(operation.path()).path(operation.method().toLowerCase());
			assertTrue(!spec.isMissingNode(), operation + " is not in the sidecar's OpenAPI document");
			Set<String> query = new TreeSet<>();
			for (JsonNode parameter : spec.path("parameters").values()) {
				if ("query".equals(parameter.path("in").asString())) {
					query.add(parameter.path("name").asString());
				}
			}
			assertTrue(query.containsAll(operation.query()), operation + " takes only " + query);
		}
	}

	@Test
	void theToolsSendTheArgumentsTheSidecarTakes() {
		JsonNode document = Sidecar.operator().openApi();
		check(document, "/v1/users/{user}/tools/cross_session_search",
				ToolCallbacks.from(CrossSessionRecallTools.builder(Sidecar.operator(), "x").build())[0]
					.getToolDefinition()
					.inputSchema());
		check(document, "/v1/users/{user}/sessions/{session}/tools/conversation_search",
				ToolCallbacks.from(ConversationSearchTools.create(Sidecar.operator(), "x"))[0].getToolDefinition()
					.inputSchema());
		for (var tool : ToolCallbacks.from(KeptMemoryTools.create(Sidecar.operator(), "x"))) {
			String path = tool.getToolDefinition().name().equals("recall_memories")
					? "/v1/users/{user}/tools/recall_memories" : "/v1/users/{user}/memories";
			check(document, path, tool.getToolDefinition().inputSchema());
		}
	}

	private static void check(JsonNode document, String path, String toolSchema) {
		String ref = document.path("paths")
			.path(path)
			.path("post")
			.path("requestBody")
			.path("content")
			.path("application/json")
			.path("schema")
			.path("$ref")
			.asString();
		JsonNode schema = document.path("components").path("schemas").path(ref.substring(ref.lastIndexOf('/') + 1));
		Set<String> published = new TreeSet<>();
		schema.path("properties").propertyNames().forEach(published::add);
		Set<String> ours = new TreeSet<>();
		JsonMapper.shared().readTree(toolSchema).path("properties").propertyNames().forEach(ours::add);
		assertEquals(published, ours, path);
	}

}
