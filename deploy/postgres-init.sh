#!/bin/sh
# Runs once, when the postgres volume is first initialised (docker-entrypoint-initdb.d).
# One server, two owners: the app's database, and the two Temporal needs. Each role owns its own
# databases, so neither service connects as the superuser.
# To re-run it after changing a password: docker compose down -v (wipes all data).
# No `set -u`: when the file is not executable the entrypoint sources it into its own shell.
set -e

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v app_password="${APP_DB_PASSWORD:-construction}" \
  -v temporal_password="${TEMPORAL_DB_PASSWORD:-temporal}" <<'SQL'
CREATE ROLE construction LOGIN PASSWORD :'app_password';
CREATE DATABASE construction OWNER construction;

CREATE ROLE temporal LOGIN PASSWORD :'temporal_password';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;

-- Temporal's visibility schema wants btree_gin; create it as superuser so the temporal role never needs to.
\connect temporal_visibility
CREATE EXTENSION IF NOT EXISTS btree_gin;
SQL
