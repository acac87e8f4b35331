"""Adapters for agent frameworks, each behind an extra of its own: the base install
neither installs nor imports any framework. Each is a thin layer over the library
(`indexer`, `recall`): the framework's objects in, events and searches out."""
