-- A host application's own tables, named as the bundle's are: they live in the host's schema (public), the bundle's
-- in its own, and neither Flyway history sees the other's.
create table accounts (id bigint primary key, holder text not null);
create table positions (id bigint primary key, account_id bigint not null references accounts (id), label text);
create table webhook_inbox (id bigint generated always as identity primary key, source text not null);

insert into accounts (id, holder) values (1, 'host');
insert into positions (id, account_id, label) values (1, 1, 'host');
insert into webhook_inbox (source) values ('host');
