-- The agents' route table (R57): which replica holds a live tunnel to which agent cluster, and
-- where the other replicas reach it. The holding replica refreshes seen_at while its tunnels
-- live and deletes its rows when they end; readers ignore a row not refreshed for a while (a
-- replica that died without deleting them).
CREATE TABLE agent_routes (
  cluster VARCHAR(64) NOT NULL,
  replica VARCHAR(128) NOT NULL,
  url VARCHAR(512) NOT NULL,
  tunnels INT NOT NULL,
  seen_at BIGINT NOT NULL,
  PRIMARY KEY (cluster, replica)
);
