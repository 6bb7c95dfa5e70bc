#!/bin/sh
# One-shot (temporalio/admin-tools): creates or upgrades Temporal's schemas in PostgreSQL.
# Every step is idempotent, so it runs on each `docker compose up` and also applies the new schema
# versions after the Temporal image is bumped. The databases themselves come from postgres-init.sh.
set -eu

: "${POSTGRES_SEEDS:=postgres}"
: "${DB_PORT:=5432}"
: "${POSTGRES_USER:=temporal}"
# temporal-sql-tool reads the password from SQL_PASSWORD.
export SQL_PASSWORD="${POSTGRES_PWD:-temporal}"
SCHEMA_ROOT=/etc/temporal/schema/postgresql/v12

sql_tool() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" "$@"
}

attempt=0
until nc -z -w 5 "$POSTGRES_SEEDS" "$DB_PORT"; do
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 30 ]; then
    echo "PostgreSQL at $POSTGRES_SEEDS:$DB_PORT did not answer" >&2
    exit 1
  fi
  sleep 2
done

for db in temporal temporal_visibility; do
  case $db in
    temporal) dir="$SCHEMA_ROOT/temporal/versioned" ;;
    *) dir="$SCHEMA_ROOT/visibility/versioned" ;;
  esac
  echo "Setting up schema of $db"
  # setup-schema -v 0.0 only creates the version tables; update-schema applies every versioned step.
  sql_tool --db "$db" setup-schema -v 0.0
  sql_tool --db "$db" update-schema -d "$dir"
done
echo "Temporal schemas are up to date"
