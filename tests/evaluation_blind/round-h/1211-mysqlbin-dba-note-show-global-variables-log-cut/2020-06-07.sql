

show global variables like 'innodb_log_buffer_size';
show global variables like 'innodb_log_file_size';
show global variables like 'innodb_log_files_in_group';
show global variables like 'innodb_flush_log_at_trx_commit';
show global variables like 'innodb_log_files_in_group';
show global variables like 'innodb_log_files_in_group';
show global variables like 'innocb_buffer_pool_size';
show global variables like 'innodb_buffer_pool_instances';
show global variables like 'innodb_max_dirty_pages_pct';
show global variables like 'innodb_flush_neighbors';
show global variables like 'innodb_flush_method';
show global variables like 'innodb_data_file_path';



mysql> show global variables like 'innodb_log_buffer_size';
+------------------------+---------+
| Variable_name          | Value   |
+------------------------+---------+
| innodb_log_buffer_size | 8388608 |
+------------------------+---------+
1 row in set (0.00 sec)

mysql> show global variables like 'innodb_log_file_size';
+----------------------+----------+
| Variable_name        | Value    |
+----------------------+----------+
| innodb_log_file_size | 33554432 |
+----------------------+----------+
1 row in set (0.00 sec)

mysql> show global variables like 'innodb_log_files_in_group';
+---------------------------+-------+
| Variable_name             | Value |
+---------------------------+-------+
| innodb_log_files_in_group | 2     |
+---------------------------+-------+
1 row in set (0.00 sec)

mysql> show global variables like 'innodb_flush_log_at_trx_commit';
+--------------------------------+-------+
| Variable_name                  | Value |
+--------------------------------+-------+
| innodb_flush_log_at_trx_commit | 1     |
+--------------------------------+-------+
1 row in set (0.00 sec)

mysql> show global variables like 'innodb_log_files_in_group';
+---------------------------+-------+
| Variable_name             | Value |
+---------------------------+-------+
| innodb_log_files_in_group | 2     |
+--
