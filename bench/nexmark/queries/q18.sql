-- Query 18: find last bid. Each bidder's last bid on each auction: a deduplication keeping the
-- last row by event time.
CREATE TABLE nexmark_q18 (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    channel VARCHAR,
    url VARCHAR,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR,
    PRIMARY KEY (bidder, auction) NOT ENFORCED
) WITH (${SINK});

INSERT INTO nexmark_q18
SELECT auction, bidder, price, channel, url, `dateTime`, extra
 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY `dateTime` DESC) AS rank_number
       FROM bid)
 WHERE rank_number <= 1;
