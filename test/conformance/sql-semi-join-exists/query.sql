SELECT e.k, e.v FROM events AS e WHERE e.v < 10 AND EXISTS (SELECT * FROM events AS b WHERE b.k = e.k AND b.v > 2 * 5)
