-- An endpoint disabled, or its breaker opened or closed.
create or replace trigger webhook_endpoints_operational_events
  after update of status, circuit_state on webhook_endpoints
  for each row when (old.status is distinct from new.status or old.circuit_state is distinct from new.circuit_state)
  execute function raise_endpoint_operational_events();
