"""Bounds that both the indexer and recall enforce, so that what one refuses to store
the other refuses to search for, with the same words."""

# Elasticsearch caps `_id` at 512 bytes; ids are hashed into `_id`, but a keyword of
# any length costs memory in every segment, so producers get the same bound. A search
# for a longer id could match nothing, and one long enough to overflow the request
# line would come back as an engine error instead.
MAX_ID_CHARS = 512
