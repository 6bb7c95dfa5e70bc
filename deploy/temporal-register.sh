#!/bin/sh
# One-shot (temporalio/admin-tools): once the Temporal server answers, makes sure the namespace exists and
# the project's custom search attributes are registered in it. Safe to run again: existing items are kept.
set -eu

ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
# Keep in step with workflows/search-attributes.ts. SQL visibility offers 10 Keyword slots per namespace.
SEARCH_ATTRIBUTES="CompanyId EventType RecordKey EndpointId DeliveryStatus EndpointHost EventId DeliveryHeld ApprovalStatus"

# Retries a command until it succeeds: the frontend accepts connections before it serves every request,
# and a new namespace takes a few seconds to reach every service.
retry() {
  attempt=1
  until "$@"; do
    if [ "$attempt" -ge 30 ]; then
      echo "Gave up after $attempt attempts: $*" >&2
      return 1
    fi
    attempt=$((attempt + 1))
    sleep 3
  done
}

echo "Waiting for Temporal at $ADDRESS"
retry temporal operator cluster health --address "$ADDRESS"

ensure_namespace() {
  temporal operator namespace describe --address "$ADDRESS" --namespace "$NAMESPACE" >/dev/null 2>&1 && return 0
  temporal operator namespace create --address "$ADDRESS" --namespace "$NAMESPACE" --retention 72h
}
echo "Ensuring namespace $NAMESPACE"
retry ensure_namespace

# An attribute already registered as Keyword is kept; one registered with another type stops the step (and so
# the stack), since renaming or retyping needs a decision. Creating one that exists is tolerated as well.
ensure_search_attribute() {
  name=$1
  existing=$(temporal operator search-attribute list --address "$ADDRESS" --namespace "$NAMESPACE" -o json) || return 1
  if printf '%s' "$existing" | grep -Eq "\"$name\": *\"INDEXED_VALUE_TYPE_KEYWORD\""; then
    echo "Search attribute $name already registered"
    return 0
  fi
  if printf '%s' "$existing" | grep -Eq "\"$name\": *\""; then
    echo "Search attribute $name exists with another type than Keyword; remove or rename it" >&2
    exit 1
  fi
  if output=$(temporal operator search-attribute create --address "$ADDRESS" --namespace "$NAMESPACE" \
    --name "$name" --type Keyword 2>&1); then
    echo "Registered search attribute $name (Keyword)"
    return 0
  fi
  echo "$output" >&2
  case $output in
    *"different type"*) exit 1 ;;
    *"already exists"*) return 0 ;;
  esac
  return 1
}
for name in $SEARCH_ATTRIBUTES; do
  retry ensure_search_attribute "$name"
done
echo "Namespace $NAMESPACE is ready with search attributes: $SEARCH_ATTRIBUTES"
