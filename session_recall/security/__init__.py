"""Least-privilege access: the roles each part of the product needs, defined once."""
