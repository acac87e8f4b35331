"""The secrets of `docker-compose.yml`'s secured profile, made once at its start by
the `secure-init` service into two volumes, each owned by the one account that reads
it and private to it (folders 700, files 600):

- Elasticsearch's (`--es`): its certificate and key for the service's host name,
  the CA, and the file realm (`users`, `users_roles`, `roles.yml`) with two users:
  serve's writes (`WRITE_USER`: ingest, enrich and admin, which `setup` and the
  erasure endpoints need) and its reads (`READ_USER`: recall);
- serve's (`--serve`): the CA, each user's password in a file of its own, and the
  bearer token, which `serve` reads through the `*_FILE` variables: no secret is in
  the compose file, an environment or a command line.

The CA's key is not kept: nothing signs another certificate later, and a bundle made
anew (its volumes removed) has a CA of its own.
"""

import os
import secrets
import shutil
import tempfile
from pathlib import Path

import click

from session_recall.core.access import Role
from session_recall.node import private
from session_recall.node.certificates import Certificates
from session_recall.node.users import FileRealm

WRITE_USER = "serve-write"
WRITE_ROLES: tuple[Role, ...] = ("ingest", "enrich", "admin")
READ_USER = "serve-read"
READ_ROLES: tuple[Role, ...] = ("recall",)
# What serve's volume holds, by the variable that names each file.
SERVE_FILES = {
    "ELASTICSEARCH_CA_CERTS": "ca.crt",
    "ELASTICSEARCH_PASSWORD_FILE": "write.password",
    "SESSION_RECALL_READ_PASSWORD_FILE": "read.password",
    "SESSION_RECALL_TOKEN_FILE": "token",
}
ES_FILES = ("ca.crt", "node.crt", "node.key", "users", "users_roles", "roles.yml")


def make(
    es: Path,
    serve: Path,
    *,
    host: str,
    alias: str,
    es_owner: tuple[int, int],
    serve_owner: tuple[int, int],
) -> bool:
    """Fill the two folders, unless an earlier start did; True when made now. Either
    is emptied first when the other is incomplete (a start that stopped halfway)."""
    if (serve / SERVE_FILES["SESSION_RECALL_TOKEN_FILE"]).is_file():
        return False
    for folder in (es, serve):
        _empty(private.folder(folder))
    with tempfile.TemporaryDirectory() as scratch:
        made = Certificates(Path(scratch)).make(common_name=host, hosts=(host,))
        for source in (made.ca, made.node, made.node_key):
            private.write(es / source.name, source.read_bytes())
        private.write(serve / SERVE_FILES["ELASTICSEARCH_CA_CERTS"], made.ca.read_bytes())
    realm = FileRealm([es])
    private.write(
        serve / SERVE_FILES["ELASTICSEARCH_PASSWORD_FILE"],
        realm.create(WRITE_USER, WRITE_ROLES, alias),
    )
    private.write(
        serve / SERVE_FILES["SESSION_RECALL_READ_PASSWORD_FILE"],
        realm.create(READ_USER, READ_ROLES, alias),
    )
    (es / ".users.lock").unlink(missing_ok=True)
    _own(es, es_owner)
    _own(serve, serve_owner)
    # Last: its presence says the bundle is whole.
    token = serve / SERVE_FILES["SESSION_RECALL_TOKEN_FILE"]
    private.write(token, secrets.token_urlsafe(32))
    os.chown(token, *serve_owner)
    return True


def _empty(folder: Path) -> None:
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _own(folder: Path, owner: tuple[int, int]) -> None:
    private.tighten(folder)
    for path in (folder, *folder.iterdir()):
        os.chown(path, *owner)


def _owner(text: str) -> tuple[int, int]:
    user, _, group = text.partition(":")
    return int(user), int(group or user)


@click.command()
@click.option("--es", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--serve", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--host", required=True, help="Elasticsearch's host name, as serve calls it.")
@click.option("--alias", envvar="SESSION_RECALL_INDEX", default="session-events")
@click.option("--es-owner", default="1000:0", help="UID:GID of Elasticsearch's account.")
@click.option("--serve-owner", required=True, help="UID:GID of serve's account.")
def main(es: Path, serve: Path, host: str, alias: str, es_owner: str, serve_owner: str) -> None:
    """Make the secured profile's secrets (the compose file's `secure-init` service)."""
    done = make(
        es,
        serve,
        host=host,
        alias=alias,
        es_owner=_owner(es_owner),
        serve_owner=_owner(serve_owner),
    )
    click.echo("Secrets made." if done else "Secrets made at an earlier start: kept.")


if __name__ == "__main__":
    main()
