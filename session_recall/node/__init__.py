"""A local single-node Elasticsearch for machines without Docker, and for the tests."""

from session_recall.node.local_node import LocalNode, NodeInfo, wait_until

__all__ = ["LocalNode", "NodeInfo", "wait_until"]
