-- wrk script: one text per request, drawn at random from $SENTENCES (one per
-- line), POSTed as TEI's /embed body ({"inputs": text, "truncate": true}) or,
-- with API=openai, as OpenAI's /v1/embeddings body. done() prints one JSON
-- line: requests, seconds, statuses (200 / 429 / other), socket errors and
-- timeouts, latency p50 / p90 / p99 in ms.
local sentences = os.getenv("SENTENCES") or "bench/serve/sentences.txt"
local api = os.getenv("API") or "tei"

local function escape(s)
  return (s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' elseif c == "\\" then return "\\\\" end
    return string.format("\\u%04x", string.byte(c))
  end))
end

local bodies = {}
for line in io.lines(sentences) do
  if #line > 0 then
    if api == "openai" then
      bodies[#bodies + 1] = '{"input":"' .. escape(line) .. '","model":"m"}'
    else
      bodies[#bodies + 1] = '{"inputs":"' .. escape(line) .. '","truncate":true}'
    end
  end
end
local path = api == "openai" and "/v1/embeddings" or "/embed"
local headers = { ["Content-Type"] = "application/json" }

local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(id * 7919 + 1)
  ok, overloaded, other = 0, 0, 0
end

function request()
  return wrk.format("POST", path, headers, bodies[math.random(#bodies)])
end

function response(status, hdrs, body)
  if status == 200 then ok = ok + 1
  elseif status == 429 or status == 503 then overloaded = overloaded + 1
  else other = other + 1 end
end

function done(summary, latency, requests)
  local s200, s429, sother = 0, 0, 0
  for _, t in ipairs(threads) do
    s200 = s200 + t:get("ok")
    s429 = s429 + t:get("overloaded")
    sother = sother + t:get("other")
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"seconds":%.3f,"ok":%d,"overloaded":%d,"other":%d,"connect_errors":%d,' ..
    '"read_errors":%d,"write_errors":%d,"timeouts":%d,"p50_ms":%.2f,"p90_ms":%.2f,"p99_ms":%.2f}\n',
    summary.requests, summary.duration / 1e6, s200, s429, sother, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3))
end
