"""A local Elasticsearch, one node or a cluster, for machines without Docker and for
the tests."""

from session_recall.node.cluster import LocalCluster
from session_recall.node.local_node import LocalNode, NodeInfo, wait_until

__all__ = ["LocalCluster", "LocalNode", "NodeInfo", "wait_until"]
