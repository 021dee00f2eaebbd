-- Query 2: selection. The bids on every 123rd auction, and their prices.
CREATE TABLE nexmark_q2 (
  auction BIGINT,
  price BIGINT
) WITH (${SINK});

INSERT INTO nexmark_q2
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
