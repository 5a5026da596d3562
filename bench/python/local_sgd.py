#!/usr/bin/env python3
"""The reference for bench/python/compare.sh: the local-SGD experiment of bench/python/*.yaml
written the way a PyTorch user would, one nn.Module and optimizer per worker.

4 workers, Fashion-MNIST (Debian's dataset-fashion-mnist, normalized as the toolkit does), every
epoch a fresh shuffle split into 4 equal shards; a round is H local steps of SGD (momentum 0.9,
weight decay 5e-4, lr 0.05) of every worker on its own shard, one worker after another, then the
replicas' parameters are averaged (weight 1/4) into every replica; the test set is evaluated at
every epoch's end. One intra-op thread, as the toolkit's default.

usage: local_sgd.py --arch mlp|cnn --hidden 32 --batch 32 --epochs 3 [--H 8]
"""
import argparse
import gzip

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(split):
    images = torch.from_numpy(read_idx(f"{DATA}/{split}-images-idx3-ubyte.gz").copy()).float().div_(255).unsqueeze(1)
    labels = torch.from_numpy(read_idx(f"{DATA}/{split}-labels-idx1-ubyte.gz").astype(np.int64))
    return images, labels


def make_model(arch, hidden):
    if arch == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, 10))
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--arch", default="mlp")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--H", type=int, default=8)
    p.add_argument("--workers", type=int, default=4)
    a = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1)
    train_x, train_y = load("train")
    test_x, test_y = load("t10k")
    mean, std = train_x.mean(), train_x.std()
    train_x, test_x = (train_x - mean) / std, (test_x - mean) / std
    models = [make_model(a.arch, a.hidden) for _ in range(a.workers)]
    for m in models[1:]:
        m.load_state_dict(models[0].state_dict())
    opts = [torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4) for m in models]
    n = train_x.shape[0]
    shard = n // a.workers
    for epoch in range(a.epochs):
        order = torch.randperm(n)
        cursor = [w * shard for w in range(a.workers)]
        end = [(w + 1) * shard for w in range(a.workers)]
        while any(c < e for c, e in zip(cursor, end)):
            for w, (model, opt) in enumerate(zip(models, opts)):
                for _ in range(a.H):
                    if cursor[w] >= end[w]:
                        break
                    idx = order[cursor[w]:min(cursor[w] + a.batch, end[w])]
                    cursor[w] += len(idx)
                    opt.zero_grad()
                    F.cross_entropy(model(train_x[idx]), train_y[idx]).backward()
                    opt.step()
            with torch.no_grad():
                params = [list(m.parameters()) for m in models]
                for k in range(len(params[0])):
                    mean_k = sum(p[k] for p in params) / a.workers
                    for p in params:
                        p[k].copy_(mean_k)
        with torch.no_grad():
            accuracy = (models[0](test_x).argmax(1) == test_y).float().mean().item()
        print(f"epoch {epoch + 1}: test accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
