-- R94 is not a rule
SELECT 'R93' FROM t; -- R92 after code
