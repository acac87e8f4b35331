"""Test helpers: where the real Elasticsearch comes from, and dedicated fault nodes."""
