"""A real ROS 2 subscriber (rclpy, Fast DDS) to /diagnostics for Bauxite's tests.

Prints one JSON line per DiagnosticStatus received:
{"level": 0, "name": "...", "message": "...", "hardware_id": "...", "values": {"key": "value"}}
and a line "ready" on stderr once subscribed. Runs until killed or --seconds pass.
The domain comes from ROS_DOMAIN_ID, as for every ROS 2 node.
"""
import argparse
import json
import sys
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--topic", default="/diagnostics")
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    rclpy.init()
    node = rclpy.create_node("bauxite_diagnostics_test")

    def on_message(msg):
        for s in msg.status:
            level = s.level if isinstance(s.level, int) else int.from_bytes(s.level, "little")
            values = {kv.key: kv.value for kv in s.values}
            line = {"level": level, "name": s.name, "message": s.message, "hardware_id": s.hardware_id,
                    "values": values, "stamp_sec": msg.header.stamp.sec}
            print(json.dumps(line), flush=True)

    node.create_subscription(DiagnosticArray, args.topic, on_message, 10)
    print("ready", file=sys.stderr, flush=True)
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
