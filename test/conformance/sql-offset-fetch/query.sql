-- compare the final table: Flink updates a rank as -U and +U where Sluice retracts and inserts
SELECT k, v FROM events ORDER BY v OFFSET 2 ROWS FETCH NEXT 2 ROWS ONLY
