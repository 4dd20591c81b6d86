-- The block of the order index (`order:<block>`) a staging number lies in:
-- runs in staging order, ORDER_BLOCK staging numbers a key (keys.ts holds
-- the same number: test/queue/run-order.test.ts holds them to each other).
local function orderBlock(seq)
  return tostring(math.floor(tonumber(seq) / 100000))
end
