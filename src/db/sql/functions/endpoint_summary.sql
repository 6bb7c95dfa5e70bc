-- An endpoint as operational events name it: its id, its URL's host and its description.
create or replace function endpoint_summary(p_id uuid, p_url text, p_description text)
  returns jsonb
  language sql
  immutable
as $$
select jsonb_build_object('id', p_id, 'host', substring(p_url from '^[A-Za-z][A-Za-z0-9+.-]*://(\[[^]]+\]|[^/:?#]+)'), 'description', p_description)
$$;
