-- Query 5: hot items. Which auctions have the most bids in each 10-second window, every 2
-- seconds: a window aggregation joined with the cascaded window aggregation over it (the most
-- bids of any auction in the window) on their windows. Its sink also takes each window's end,
-- which the benchmark's leaves out, so that the windows only Flink's end of input fires can be
-- left out of the comparison, as q7's and q11's are.
CREATE TABLE nexmark_q5 (
  auction BIGINT,
  num BIGINT,
  endtime TIMESTAMP(3)
) WITH (${SINK});

INSERT INTO nexmark_q5
SELECT AuctionBids.auction, AuctionBids.num, AuctionBids.endtime
 FROM (
   SELECT
     auction,
     count(*) AS num,
     window_start AS starttime,
     window_end AS endtime
     FROM TABLE(
             HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
 ) AS AuctionBids
 JOIN (
   SELECT
     max(CountBids.num) AS maxn,
     CountBids.starttime,
     CountBids.endtime
   FROM (
     SELECT
       count(*) AS num,
       window_start AS starttime,
       window_end AS endtime
     FROM TABLE(
                HOP(TABLE bid, DESCRIPTOR(`dateTime`), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
     GROUP BY auction, window_start, window_end
     ) AS CountBids
   GROUP BY CountBids.starttime, CountBids.endtime
 ) AS MaxBids
 ON AuctionBids.starttime = MaxBids.starttime AND
    AuctionBids.endtime = MaxBids.endtime AND
    AuctionBids.num >= MaxBids.maxn;
