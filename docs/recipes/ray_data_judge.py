"""Answer a judge job's exported shards with Ray Data LLM, against any OpenAI-compatible endpoint.

    rageval judge eval.rageval --run v2 --judge gpt-correct --export-shards shards
    pip install "ray[data]==2.60.0" aiohttp==3.14.5   # its HTTP stage needs aiohttp; ray[data] lacks it
    OPENAI_API_KEY=... python ray_data_judge.py shards results --url https://api.openai.com/v1/chat/completions
    rageval judge eval.rageval --run v2 --judge gpt-correct --import-results results/*.json

Each shard line is `{"custom_id", "method", "url", "body"}` (the OpenAI batch request format); the request body is
sent as it is, so the model, messages and sampling are the ones the app would have sent. Each result line is the
batch output format `--import-results` reads: `{"custom_id", "response": {"status_code": 200, "body": <the chat
completion>}}`. `read_json` leaves the shards' `_manifest.json` out (Ray skips `_` and `.` files). For a model on your
own GPUs, swap HttpRequestProcessorConfig for vLLMEngineProcessorConfig and build the body from `body.messages`.

This file is run by the test suite (tests/core/test_ray_recipe.py) against a loopback server.
"""

from __future__ import annotations

import argparse
import os

import ray
from ray.data.llm import HttpRequestProcessorConfig, build_processor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shards", help="the folder --export-shards wrote")
    parser.add_argument("results", help="a folder for the result lines (JSONL files)")
    parser.add_argument("--url", required=True, help="the chat completions URL, e.g. https://HOST/v1/chat/completions")
    parser.add_argument("--key-env", default="OPENAI_API_KEY", help="the environment variable holding the API key")
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()

    config = HttpRequestProcessorConfig(
        url=args.url,
        headers={"Authorization": f"Bearer {os.environ.get(args.key_env, '')}"},
        concurrency=args.concurrency,
    )
    processor = build_processor(
        config,
        # the request exactly as the app would send it, and the key that brings its reply home
        preprocess=lambda row: {"payload": row["body"], "custom_id": row["custom_id"]},
        postprocess=lambda row: {"custom_id": row["custom_id"],
                                 "response": {"status_code": 200, "body": row["http_response"]}},
    )
    processor(ray.data.read_json(args.shards)).write_json(args.results)


if __name__ == "__main__":
    main()
