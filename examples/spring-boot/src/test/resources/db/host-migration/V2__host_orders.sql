create table orders (id bigint primary key, account_id bigint not null references accounts (id));
