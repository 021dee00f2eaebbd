-- Query 4: average price for a category. The average winning bid of each category's auctions:
-- a regular join of auctions and bids, an aggregation of it, and an aggregation of that one's
-- updates.
CREATE TABLE nexmark_q4 (
  id BIGINT,
  final BIGINT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (${SINK});

INSERT INTO nexmark_q4
SELECT
    Q.category,
    AVG(Q.final)
FROM (
    SELECT MAX(B.price) AS final, A.category
    FROM auction A, bid B
    WHERE A.id = B.auction AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires
    GROUP BY A.id, A.category
) Q
GROUP BY Q.category;
