# The session-recall sidecar: `session-recall serve` on port 8080.
# docker compose builds it (see docker-compose.yml); the alias is set up at start.
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md .env ./
COPY session_recall session_recall
COPY indexer indexer
COPY recall recall
COPY mappings mappings
COPY embeddings embeddings
# A fixed id: the compose file's secured profile gives this account its secrets' volume.
RUN pip install --no-cache-dir . \
    && groupadd --system --gid 10001 session-recall \
    && useradd --system --uid 10001 --gid 10001 --no-create-home session-recall

USER session-recall
ENV SESSION_RECALL_HOME=/tmp/session-recall
EXPOSE 8080
# Inside the container it must listen beyond loopback; compose publishes the port on
# 127.0.0.1 only.
CMD ["sh", "-c", "session-recall setup && exec session-recall serve --host 0.0.0.0 --port 8080"]
