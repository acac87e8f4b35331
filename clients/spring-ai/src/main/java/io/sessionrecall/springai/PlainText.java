package io.sessionrecall.springai;

import java.lang.reflect.Type;

import org.springframework.ai.tool.execution.ToolCallResultConverter;

/**
 * The sidecar's answer as the model reads it: the reference's JSON array, "No results
 * found." or an "Error: ..." line, never quoted again as a JSON string.
 */
public final class PlainText implements ToolCallResultConverter {

	@Override
	public String convert(Object result, Type returnType) {
		return result == null ? "" : result.toString();
	}

}
