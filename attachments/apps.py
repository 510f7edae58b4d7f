from django.apps import AppConfig


class AttachmentsConfig(AppConfig):
    name = "attachments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from django.conf import settings
        from PIL import Image

        # Pillow refuses (DecompressionBombError) past twice this; sniff checks it exactly.
        Image.MAX_IMAGE_PIXELS = settings.ARBE_ATTACHMENTS_MAX_PIXELS
