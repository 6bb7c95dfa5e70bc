-- Trigger function of api_keys_notify: tells the API processes a key changed (src/domain/accounts/api-key-cache.ts).
create or replace function notify_api_key_change()
  returns trigger
  language plpgsql
as $$
begin
  perform pg_notify('api_keys', old.prefix);
  return null;
end
$$;
