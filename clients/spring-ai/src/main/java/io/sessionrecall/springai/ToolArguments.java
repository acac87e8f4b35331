package io.sessionrecall.springai;

import java.util.LinkedHashMap;
import java.util.Map;

import tools.jackson.databind.json.JsonMapper;

/** The model's arguments, sent on to the sidecar as JSON; it checks them and words any mistake. */
final class ToolArguments {

	private final Map<String, Object> values = new LinkedHashMap<>();

	ToolArguments put(String name, Object value) {
		if (value != null) {
			this.values.put(name, value);
		}
		return this;
	}

	String json() {
		return JsonMapper.shared().writeValueAsString(this.values);
	}

}
