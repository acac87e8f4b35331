"""An MCP server over stdio that offers bound recall and kept-memory tools and nothing else.

It is built from `BoundTool`s, whose scope the command line fixed before the server
started: the model can list and call them, and no request can change what they search.
"""

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from session_recall import __version__
from session_recall.tools import BoundTool, ToolArgumentError, ToolResult

INSTRUCTIONS = (
    "Recall tools over past conversations, and the user's kept memories (recall_memories; "
    "save_memory and retire_memory when the server keeps memories). Their scope (user, "
    "contact, inbox) is fixed by the application that started this server."
)


def build_server(tools: list[BoundTool]) -> Server:
    by_name = {tool.name: tool for tool in tools}

    async def list_tools(
        _ctx: object, _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=tool.spec.json_schema(),
                )
                for tool in tools
            ]
        )

    async def call_tool(_ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            unknown = ToolArgumentError(
                f"there is no tool named {params.name!r}; use one of {sorted(by_name)}."
            )
            result = ToolResult.failure(unknown)
        else:
            # The client and Elasticsearch calls block: keep them off the event loop.
            result = await anyio.to_thread.run_sync(tool.call, dict(params.arguments or {}))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)],
            is_error=result.is_error,
        )

    return Server(
        "session-recall",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
