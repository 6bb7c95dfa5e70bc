-- A key changed or was deleted: the API processes drop it from their caches (src/domain/accounts/api-key-cache.ts).
create or replace trigger api_keys_notify
  after delete or update of company_id, name, prefix, key_hash, scopes, signing_secret_sealed, revoked_at on api_keys
  for each row execute function notify_api_key_change();
