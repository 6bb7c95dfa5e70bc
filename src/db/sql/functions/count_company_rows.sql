-- Trigger function of the <table>_count_inserts / _count_deletes triggers: keeps record_counts, each company's rows
-- of a table (src/domain/record-counts.ts).
create or replace function count_company_rows()
  returns trigger
  language plpgsql
as $$
begin
  if tg_op = 'INSERT' then
    insert into record_counts (company_id, table_name, n) select company_id, tg_table_name, count(*) from new_rows group by company_id;
  else
    insert into record_counts (company_id, table_name, n) select company_id, tg_table_name, -count(*) from old_rows group by company_id;
  end if;
  return null;
end
$$;
