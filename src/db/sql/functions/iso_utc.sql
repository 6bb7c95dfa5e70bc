-- A timestamp as operational events write it: ISO 8601 in UTC with milliseconds.
create or replace function iso_utc(p_at timestamp with time zone)
  returns text
  language sql
  immutable
as $$
select to_char(p_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
